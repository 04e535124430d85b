#!/usr/bin/env python3
"""Checks lowered tool schemas with the providers' own code.

Reads `{"exports": [{"tool": ..., "target": ..., "schema": {...}}]}` on stdin, prints
`{"failures": [{"tool", "target", "check", "detail"}]}` on stdout and exits 1 when there is
a failure (2 when the input itself is unusable). `--self-test` runs every check on schemas
that must pass it and on schemas that must fail it, so a check that cannot fail is caught.

Targets and checks (the versions are pinned in requirements.txt beside this file):

- every target: the root is an object schema, no `$schema` (MCP's root names the 2020-12
  dialect, and only that), no boolean sub-schema
  (`common`); all but `gemini_parameters`: JSON Schema 2020-12 meta-validation
  (`jsonschema_2020_12`).
- `openai_strict`: OpenAI's strict normaliser (`openai_strict_normaliser`) and the
  openai-agents one (`agents_strict_normaliser`) leave the schema unchanged.
- `anthropic`, `anthropic_strict`: anthropic's `transform_schema` runs
  (`anthropic_transform`); for `anthropic_strict` it also leaves the schema unchanged but for
  the `type` it drops beside `enum`/`const` (`anthropic_transform_unchanged`): whatever it
  would move into the description was not lowered.
- `gemini`: no `$schema`, `const`, `examples`, exclusive bounds (`gemini_keywords`).
- `gemini_parameters`: no `$ref`, `$defs`, `const`, `additionalProperties`, `$schema`,
  `propertyNames`, no `type` array (`gemini_parameters_keywords`), and google-genai's
  `Schema` model accepts it without a warning (`genai_schema`).
- `gemini`, `gemini_parameters`: parameter names are letters, digits and `_`, not starting
  with a digit (`gemini_parameter_names`).
"""

from __future__ import annotations

import copy
import json
import re
import sys
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import anthropic
import jsonschema
from agents.strict_schema import ensure_strict_json_schema as agents_ensure_strict
from google.genai import types as genai_types
from openai.lib._pydantic import _ensure_strict_json_schema as openai_ensure_strict

TARGETS = (
    "openai_strict",
    "anthropic",
    "anthropic_strict",
    "gemini",
    "gemini_parameters",
    "mcp",
)

# Keywords whose value is one sub-schema, a list of them, or a map of name to sub-schema.
_SCHEMA_VALUED = (
    "items",
    "additionalProperties",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
    "additionalItems",
)
_SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems", "items")
_SCHEMA_MAPS = ("properties", "$defs", "definitions", "patternProperties", "dependentSchemas")

_GEMINI_PARAMETERS_FORBIDDEN = (
    "$ref",
    "$defs",
    "const",
    "additionalProperties",
    "$schema",
    "propertyNames",
)
_GEMINI_FORBIDDEN = ("$schema", "const", "examples", "exclusiveMinimum", "exclusiveMaximum")
_GEMINI_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class Failure(Exception):
    """A check's verdict against a schema, with what is wrong."""


def walk(schema: Any, pointer: str = "") -> Iterator[tuple[str, Any]]:
    """Every sub-schema with its JSON pointer, the root first.

    Only schema positions are visited: the names under `properties` and the values of
    `enum`, `default` or `examples` are data, not keywords.
    """
    yield pointer, schema
    if not isinstance(schema, dict):
        return
    for key in _SCHEMA_VALUED:
        if key in schema and isinstance(schema[key], (dict, bool)):
            yield from walk(schema[key], f"{pointer}/{key}")
    for key in _SCHEMA_LISTS:
        if isinstance(schema.get(key), list):
            for index, entry in enumerate(schema[key]):
                yield from walk(entry, f"{pointer}/{key}/{index}")
    for key in _SCHEMA_MAPS:
        if isinstance(schema.get(key), dict):
            for name, entry in schema[key].items():
                yield from walk(entry, f"{pointer}/{key}/{escape(name)}")


def escape(name: str) -> str:
    """`name` as one JSON pointer token."""
    return name.replace("~", "~0").replace("/", "~1")


def first_difference(before: Any, after: Any, pointer: str = "") -> str | None:
    """Where two JSON values first differ, as `pointer: before -> after`; None when equal."""
    if isinstance(before, dict) and isinstance(after, dict):
        for key in sorted(set(before) | set(after)):
            where = f"{pointer}/{escape(key)}"
            if key not in after:
                return f"{where}: removed (was {json.dumps(before[key])})"
            if key not in before:
                return f"{where}: added {json.dumps(after[key])}"
            found = first_difference(before[key], after[key], where)
            if found is not None:
                return found
        return None
    if isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        for index, (left, right) in enumerate(zip(before, after, strict=True)):
            found = first_difference(left, right, f"{pointer}/{index}")
            if found is not None:
                return found
        return None
    # `1 == 1.0 == True` in Python: the kinds must match too.
    if type(before) is type(after) and before == after:
        return None
    return f"{pointer or '/'}: {json.dumps(before)} -> {json.dumps(after)}"


DIALECT_2020_12 = "https://json-schema.org/draft/2020-12/schema"


def check_common_mcp(schema: Any) -> None:
    """MCP: the root names the 2020-12 dialect, and the rest is as every target's."""
    if not isinstance(schema, dict) or schema.get("$schema") != DIALECT_2020_12:
        raise Failure(f"the root's `$schema` is not {DIALECT_2020_12}")
    check_common({key: value for key, value in schema.items() if key != "$schema"})


def check_common(schema: Any) -> None:
    """An object root, no `$schema`, no boolean sub-schema (every target)."""
    if not isinstance(schema, dict):
        raise Failure(f"the root is {json.dumps(schema)}, not an object schema")
    if schema.get("type") != "object":
        raise Failure(f'the root\'s type is {json.dumps(schema.get("type"))}, not "object"')
    for pointer, sub in walk(schema):
        # `additionalProperties: false` closes an object (OpenAI requires it): no sub-schema.
        closes = sub is False and pointer.endswith(
            ("/additionalProperties", "/unevaluatedProperties")
        )
        if isinstance(sub, bool) and not closes:
            raise Failure(f"{pointer}: boolean sub-schema `{json.dumps(sub)}` (write {{}})")
        if isinstance(sub, dict) and "$schema" in sub:
            raise Failure(f"{pointer or '/'}: `$schema`")


def check_meta(schema: Any) -> None:
    """JSON Schema 2020-12 meta-validation."""
    try:
        jsonschema.Draft202012Validator.check_schema(schema)
    except jsonschema.SchemaError as error:
        where = "/" + "/".join(str(part) for part in error.absolute_path)
        raise Failure(f"{where}: {error.message}") from None


def check_unchanged(name: str, normalise: Callable[[dict[str, Any]], Any], schema: Any) -> None:
    """`normalise` (which may edit its argument) runs and gives back the same schema."""
    given = copy.deepcopy(schema)
    try:
        result = normalise(given)
    except Exception as error:  # noqa: BLE001 - any exception is the vendor's rejection
        raise Failure(f"{name} raised {type(error).__name__}: {error}") from None
    found = first_difference(schema, result)
    if found is not None:
        raise Failure(f"{name} changed the schema: {found}")


def openai_normalise(schema: dict[str, Any]) -> Any:
    """OpenAI's own strict normaliser, as `to_strict_json_schema` calls it on a raw dict."""
    return openai_ensure_strict(schema, path=(), root=schema)


def anthropic_transform(schema: Any) -> None:
    """anthropic's `transform_schema` runs without raising."""
    try:
        anthropic.transform_schema(copy.deepcopy(schema))
    except Exception as error:  # noqa: BLE001 - any exception is the vendor's rejection
        raise Failure(f"transform_schema raised {type(error).__name__}: {error}") from None


def without_type_beside_literals(schema: Any) -> Any:
    """`schema` with `type` removed wherever `enum` or `const` stands beside it: the one
    rewrite `transform_schema` makes to a schema already within Anthropic's strict subset."""
    if isinstance(schema, list):
        return [without_type_beside_literals(entry) for entry in schema]
    if not isinstance(schema, dict):
        return schema
    result = {}
    for key, value in schema.items():
        if key in ("enum", "const", "default", "examples"):
            result[key] = value
        elif key in ("properties", "$defs"):
            result[key] = (
                {name: without_type_beside_literals(sub) for name, sub in value.items()}
                if isinstance(value, dict)
                else value
            )
        else:
            result[key] = without_type_beside_literals(value)
    if "type" in result and ("enum" in result or "const" in result):
        del result["type"]
    return result


def anthropic_unchanged(schema: Any) -> None:
    """Anthropic's strict transform moves nothing into a description, and drops nothing."""
    try:
        result = anthropic.transform_schema(copy.deepcopy(schema))
    except Exception as error:  # noqa: BLE001 - reported by `anthropic_transform`
        raise Failure(f"transform_schema raised {type(error).__name__}: {error}") from None
    found = first_difference(without_type_beside_literals(schema), result)
    if found is not None:
        raise Failure(f"transform_schema changed the schema: {found}")


def check_forbidden(schema: Any, forbidden: tuple[str, ...], type_arrays: bool) -> None:
    """No keyword of `forbidden` anywhere (and no `type` array unless `type_arrays`)."""
    for pointer, sub in walk(schema):
        if not isinstance(sub, dict):
            continue
        for keyword in forbidden:
            if keyword in sub:
                raise Failure(f"{pointer or '/'}: `{keyword}`")
        if not type_arrays and isinstance(sub.get("type"), list):
            raise Failure(f"{pointer or '/'}: `type` array {json.dumps(sub['type'])}")


def gemini_keywords(schema: Any) -> None:
    """What Gemini's `parametersJsonSchema` does not take."""
    check_forbidden(schema, _GEMINI_FORBIDDEN, type_arrays=True)


def gemini_parameters_keywords(schema: Any) -> None:
    """What Gemini's `parameters` (OpenAPI 3.0 subset) rejects."""
    check_forbidden(schema, _GEMINI_PARAMETERS_FORBIDDEN, type_arrays=False)


def gemini_parameter_names(schema: Any) -> None:
    """Parameter names Gemini accepts."""
    for pointer, sub in walk(schema):
        if isinstance(sub, dict) and isinstance(sub.get("properties"), dict):
            for name in sub["properties"]:
                if not _GEMINI_NAME.match(name):
                    raise Failure(f"{pointer}/properties: name {json.dumps(name)}")


def genai_schema(schema: Any) -> None:
    """google-genai's `Schema` model (extra keys forbidden) accepts it, with no warning
    (an unknown `type` is only a warning there)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            genai_types.Schema.model_validate(schema)
        except Exception as error:  # noqa: BLE001 - any exception is the vendor's rejection
            raise Failure(f"Schema.model_validate: {error}") from None
    if caught:
        raise Failure(f"Schema.model_validate warned: {caught[0].message}")


CHECKS: dict[str, list[tuple[str, Callable[[Any], None]]]] = {target: [] for target in TARGETS}
for _target in TARGETS:
    CHECKS[_target].append(("common", check_common_mcp if _target == "mcp" else check_common))
    if _target != "gemini_parameters":
        CHECKS[_target].append(("jsonschema_2020_12", check_meta))
CHECKS["openai_strict"] += [
    (
        "openai_strict_normaliser",
        lambda s: check_unchanged("openai _ensure_strict_json_schema", openai_normalise, s),
    ),
    (
        "agents_strict_normaliser",
        lambda s: check_unchanged("agents ensure_strict_json_schema", agents_ensure_strict, s),
    ),
]
CHECKS["anthropic"].append(("anthropic_transform", anthropic_transform))
CHECKS["anthropic_strict"] += [
    ("anthropic_transform", anthropic_transform),
    ("anthropic_transform_unchanged", anthropic_unchanged),
]
CHECKS["gemini"] += [
    ("gemini_keywords", gemini_keywords),
    ("gemini_parameter_names", gemini_parameter_names),
]
CHECKS["gemini_parameters"] += [
    ("gemini_parameters_keywords", gemini_parameters_keywords),
    ("genai_schema", genai_schema),
    ("gemini_parameter_names", gemini_parameter_names),
]


def check_export(export: Any) -> list[dict[str, str]]:
    """Every check of one export's target, each failure as a report entry."""
    if not isinstance(export, dict):
        return [
            {"tool": "?", "target": "?", "check": "input", "detail": "an export is not an object"}
        ]
    tool = str(export.get("tool", "?"))
    target = export.get("target")
    if target not in CHECKS:
        return [{"tool": tool, "target": str(target), "check": "input", "detail": "unknown target"}]
    if "schema" not in export:
        return [{"tool": tool, "target": target, "check": "input", "detail": "no schema"}]
    failures = []
    for check, run in CHECKS[target]:
        try:
            run(export["schema"])
        except Failure as failure:
            failures.append(
                {"tool": tool, "target": target, "check": check, "detail": str(failure)}
            )
    return failures


def check_document(document: Any) -> list[dict[str, str]]:
    """Every export's failures, in order."""
    exports = document.get("exports") if isinstance(document, dict) else None
    if not isinstance(exports, list):
        return [{"tool": "?", "target": "?", "check": "input", "detail": "no `exports` list"}]
    return [failure for export in exports for failure in check_export(export)]


def closed(properties: dict[str, Any]) -> dict[str, Any]:
    """A strict object: every property required, nothing else allowed."""
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


# (target, schema, the checks it must fail: none for a schema that must pass them all)
SELF_TEST: list[tuple[str, Any, set[str]]] = [
    # Schemas every check of their target accepts.
    ("openai_strict", closed({}), set()),
    (
        "openai_strict",
        closed(
            {
                "query": {"type": "string", "description": "What to look for."},
                "limit": {"anyOf": [{"type": "integer", "minimum": 1}, {"type": "null"}]},
                "tags": {"type": "array", "items": {"type": "string"}},
                "filter": {"anyOf": [{"$ref": "#/$defs/Filter"}, {"type": "null"}]},
            }
        )
        | {"$defs": {"Filter": closed({"kind": {"type": "string", "enum": ["a", "b"]}})}},
        set(),
    ),
    (
        "anthropic",
        {"type": "object", "properties": {"n": {"type": "integer", "maximum": 9}}},
        set(),
    ),
    (
        "anthropic_strict",
        closed(
            {
                "mode": {"enum": ["fast", "slow"]},
                "when": {"type": "string", "format": "date-time"},
                "ids": {"type": "array", "items": {"type": "string"}, "minItems": 1},
            }
        ),
        set(),
    ),
    ("gemini", {"type": "object", "properties": {"n": {"type": ["integer", "null"]}}}, set()),
    (
        "gemini_parameters",
        {
            "type": "object",
            "properties": {"n": {"type": "integer", "format": "int64", "nullable": True}},
            "required": ["n"],
        },
        set(),
    ),
    (
        "mcp",
        {"type": "object", "properties": {"m": {"type": "object", "additionalProperties": {}}}},
        set(),
    ),
    # Schemas that each must fail the checks named.
    ("mcp", {"type": "array"}, {"common"}),
    ("mcp", {"type": "object", "properties": {"x": True}}, {"common"}),
    ("mcp", {"type": "object", "additionalProperties": True}, {"common"}),
    ("mcp", {"type": "object", "properties": {"l": {"type": "array", "items": False}}}, {"common"}),
    ("mcp", {"type": "object", "properties": {"x": {"type": "strnig"}}}, {"jsonschema_2020_12"}),
    # `"$schema": None`: no dialect named at all (see `_as_exported`).
    ("mcp", {"$schema": None, "type": "object"}, {"common"}),
    ("mcp", {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"}, {"common"}),
    (
        "mcp",
        {
            "$schema": DIALECT_2020_12,
            "type": "object",
            "properties": {"x": {"$schema": DIALECT_2020_12, "type": "string"}},
        },
        {"common"},
    ),
    (
        "openai_strict",
        {"$schema": DIALECT_2020_12, "type": "object", "additionalProperties": False},
        {"common"},
    ),
    # An optional property: both normalisers make it required.
    (
        "openai_strict",
        {
            "type": "object",
            "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
            "required": ["a"],
            "additionalProperties": False,
        },
        {"openai_strict_normaliser", "agents_strict_normaliser"},
    ),
    # An open nested object: both close it (the agents one refuses a map outright).
    (
        "openai_strict",
        closed(
            {"meta": {"type": "object", "properties": {"k": {"type": "string"}}, "required": ["k"]}}
        ),
        {"openai_strict_normaliser", "agents_strict_normaliser"},
    ),
    # `default: null` is stripped by both.
    (
        "openai_strict",
        closed({"a": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None}}),
        {"openai_strict_normaliser", "agents_strict_normaliser"},
    ),
    # `$ref` with a sibling: OpenAI's inlines it, the agents one refuses the constraint.
    (
        "openai_strict",
        closed({"f": {"$ref": "#/$defs/F", "minLength": 1}}) | {"$defs": {"F": {"type": "string"}}},
        {"openai_strict_normaliser", "agents_strict_normaliser"},
    ),
    # `oneOf`: only the agents one rewrites it (to `anyOf`).
    (
        "openai_strict",
        closed({"v": {"oneOf": [{"type": "string"}, {"type": "integer"}]}}),
        {"agents_strict_normaliser"},
    ),
    # A nullable root: the agents one refuses it.
    (
        "openai_strict",
        {
            "type": ["object", "null"],
            "properties": {},
            "required": [],
            "additionalProperties": False,
        },
        {"common", "agents_strict_normaliser"},
    ),
    # A type array: anthropic's transform has no case for one.
    (
        "anthropic",
        {"type": "object", "properties": {"n": {"type": ["integer", "null"]}}},
        {"anthropic_transform"},
    ),
    # A property with no type: the transform refuses it.
    (
        "anthropic_strict",
        closed({"x": {"description": "anything"}}),
        {"anthropic_transform", "anthropic_transform_unchanged"},
    ),
    # Keywords strict mode cannot enforce: the transform moves them into the description.
    (
        "anthropic_strict",
        closed({"n": {"type": "integer", "minimum": 1}, "s": {"type": "string", "maxLength": 9}}),
        {"anthropic_transform_unchanged"},
    ),
    # An open object: the transform closes it.
    ("anthropic_strict", {"type": "object", "properties": {}}, {"anthropic_transform_unchanged"}),
    ("gemini", {"type": "object", "properties": {"c": {"const": 1}}}, {"gemini_keywords"}),
    (
        "gemini",
        {"type": "object", "properties": {"c": {"type": "integer", "exclusiveMinimum": 0}}},
        {"gemini_keywords"},
    ),
    (
        "gemini",
        {"type": "object", "properties": {"9lives": {"type": "integer"}}},
        {"gemini_parameter_names"},
    ),
    (
        "gemini_parameters",
        {
            "type": "object",
            "properties": {"t": {"$ref": "#/$defs/T"}},
            "$defs": {"T": {"type": "string"}},
        },
        {"gemini_parameters_keywords", "genai_schema"},
    ),
    (
        "gemini_parameters",
        {"type": "object", "properties": {"n": {"type": ["integer", "null"]}}},
        {"gemini_parameters_keywords", "genai_schema"},
    ),
    (
        "gemini_parameters",
        {"type": "object", "properties": {"k": {"type": "string", "const": "x"}}},
        {"gemini_parameters_keywords", "genai_schema"},
    ),
    # google-genai's model has the field, the API rejects it: only our keyword check sees it.
    (
        "gemini_parameters",
        {"type": "object", "properties": {}, "additionalProperties": False},
        {"gemini_parameters_keywords"},
    ),
    (
        "gemini_parameters",
        {"type": "object", "propertyNames": {"pattern": "^a"}},
        {"gemini_parameters_keywords", "genai_schema"},
    ),
    # Not a `parameters` keyword at all: the model forbids extra keys.
    (
        "gemini_parameters",
        {"type": "object", "properties": {"s": {"type": "string", "examples": ["a"]}}},
        {"genai_schema"},
    ),
    (
        "gemini_parameters",
        {"type": "object", "properties": {"s": {"type": "strnig"}}},
        {"genai_schema"},
    ),
    # A property named like a keyword is a name, not a keyword.
    ("gemini_parameters", {"type": "object", "properties": {"const": {"type": "string"}}}, set()),
]


def _as_exported(target: str, schema: Any) -> Any:
    """A self-test schema as its target's export has it: an MCP root names the 2020-12 dialect
    unless the case names another (`None`: names none)."""
    if target != "mcp" or not isinstance(schema, dict):
        return schema
    if "$schema" not in schema:
        return {"$schema": DIALECT_2020_12, **schema}
    if schema["$schema"] is None:
        return {key: value for key, value in schema.items() if key != "$schema"}
    return schema


def self_test() -> list[str]:
    """Each self-test schema fails exactly the checks it names; what went otherwise."""
    problems = []
    for index, (target, schema, expected) in enumerate(SELF_TEST):
        schema = _as_exported(target, schema)
        failures = check_export({"tool": f"self_test_{index}", "target": target, "schema": schema})
        failed = {failure["check"] for failure in failures}
        if failed != expected:
            problems.append(
                f"case {index} ({target}): expected to fail {sorted(expected)}, "
                f"failed {sorted(failed)}: {json.dumps(failures)}"
            )
    covered = {check for _, _, expected in SELF_TEST for check in expected}
    for target, checks in CHECKS.items():
        for check, _ in checks:
            if check not in covered:
                problems.append(f"no self-test case makes `{check}` ({target}) fail")
    return problems


def main(argv: list[str]) -> int:
    """Runs the self-test or checks stdin's document; the exit code."""
    if argv[1:] == ["--self-test"]:
        problems = self_test()
        json.dump({"cases": len(SELF_TEST), "problems": problems}, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 1 if problems else 0
    if argv[1:]:
        sys.stderr.write("usage: check_schemas.py [--self-test] < exports.json\n")
        return 2
    try:
        document = json.load(sys.stdin)
    except json.JSONDecodeError as error:
        sys.stderr.write(f"check_schemas.py: stdin is not JSON: {error}\n")
        return 2
    failures = check_document(document)
    json.dump({"failures": failures}, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
