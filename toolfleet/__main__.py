from toolfleet.cli import main

main()
