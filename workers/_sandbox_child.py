"""Runs inside the sandbox process: load a runtime tool's source with guarded builtins and call it.

argv: mode (preflight|run), source path, scratch folder, allowed imports (comma-separated), tool name.
stdin: {"action", "params", "actions"}. The result is one JSON object on the original stdout;
whatever the tool prints is captured (capped) and returned as `printed`.
"""

import asyncio
import builtins
import io
import json
import os
import sys
import traceback

REFUSED_BUILTINS = {"eval", "exec", "compile", "getattr", "setattr", "delattr", "vars", "globals", "locals",
                    "breakpoint", "input", "memoryview", "exit", "quit", "help", "open", "__import__"}


def main() -> None:
    mode, source_path, scratch, allowed_csv, tool = sys.argv[1:6]
    allowed = set(filter(None, allowed_csv.split(",")))
    request = json.loads(sys.stdin.read() or "{}")
    out = sys.stdout
    printed = io.StringIO()
    real_import, real_open = builtins.__import__, builtins.open

    def guarded_import(name, globals=None, locals=None, fromlist=(), level=0):  # noqa: A002
        parts = name.split(".")
        if level or not any(".".join(parts[:i]) in allowed for i in range(1, len(parts) + 1)):
            raise ImportError(f"import of {name!r} is not allowed in the sandbox")
        return real_import(name, globals, locals, fromlist, level)

    def guarded_open(file, mode="r", *args, **kwargs):
        path = os.path.realpath(os.path.join(scratch, os.fspath(file)))
        if path != scratch and not path.startswith(scratch + os.sep):
            raise PermissionError(f"open({file!r}) is outside the sandbox's scratch folder")
        return real_open(path, mode, *args, **kwargs)

    safe = {k: getattr(builtins, k) for k in dir(builtins) if k not in REFUSED_BUILTINS}
    safe.update(__import__=guarded_import, open=guarded_open, print=lambda *a, **k: print(
        *a, **{**k, "file": printed}))
    namespace = {"__name__": f"toolfleet_tool_{tool}", "__builtins__": safe}
    try:
        with real_open(source_path, encoding="utf-8") as fh:
            code = compile(fh.read(), f"<tool {tool}>", "exec")
        exec(code, namespace)  # noqa: S102 - the sandbox's purpose: run checked code with guarded builtins
        run = namespace.get("run")
        if not callable(run):
            raise TypeError("the module defines no run(action, params)")
        if mode == "preflight":
            schemas = {}
            for action, model in (namespace.get("PARAMS") or {}).items():
                schemas[action] = model.model_json_schema()
            result = {"ok": True, "schemas": schemas}
            if "selftest" in request.get("actions", []):
                value = run("selftest", {})
                if asyncio.iscoroutine(value):
                    value = asyncio.run(value)
                result["selftest"] = value
        else:
            value = run(request["action"], request.get("params") or {})
            if asyncio.iscoroutine(value):
                value = asyncio.run(value)
            result = {"ok": True, "output": value}
    except BaseException as exc:  # noqa: BLE001 - every failure goes back to the worker, described
        tb = traceback.extract_tb(exc.__traceback__)
        lines = [f.lineno for f in tb if f.filename == f"<tool {tool}>"]
        result = {"ok": False, "error": {"type": type(exc).__name__, "message": str(exc) or type(exc).__name__,
                                         "traceback": "".join(traceback.format_exception(exc)),
                                         "line": lines[-1] if lines else None}}
    result["printed"] = printed.getvalue()[-10_000:]
    try:
        text = json.dumps(result, default=repr)
    except (TypeError, ValueError) as exc:
        text = json.dumps({"ok": False, "error": {"type": "OutputNotJSON", "message": str(exc), "traceback": None,
                                                  "line": None}})
    out.write(text)
    out.flush()


main()
