"""Check an execution request against a definition, without importing the executable."""

from __future__ import annotations

from typing import Any

from jsonschema import Draft202012Validator

from registry.definitions import ToolDefinition
from toolfleet.errors import ActionNotFound, InvalidParams, ToolDisabled

__all__ = ["validate_request"]


def validate_request(tool: ToolDefinition, action: str, params: Any) -> None:
    """Raise ActionNotFound, ToolDisabled or InvalidParams (with field errors) when the request is wrong."""
    if action not in tool.actions:
        raise ActionNotFound(tool.name, action, tool.actions)
    if not tool.enabled:
        raise ToolDisabled(tool.name)
    if not isinstance(params, dict):
        raise InvalidParams(tool.name, action, [{"loc": [], "msg": "params must be a JSON object"}])
    validator = Draft202012Validator(tool.schema_for(action))
    errors = []
    for err in sorted(validator.iter_errors(params), key=lambda e: list(e.absolute_path)):
        loc = [str(p) for p in err.absolute_path]
        if err.validator == "required" and isinstance(err.instance, dict):
            missing = [r for r in err.validator_value if r not in err.instance]
            loc = loc + missing[:1]
        errors.append({"loc": loc, "msg": err.message, "type": str(err.validator)})
    if errors:
        raise InvalidParams(tool.name, action, errors)
