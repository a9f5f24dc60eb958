#!/usr/bin/env python3
"""Out-of-process check of Tether's public JSON contracts with an independent validator.

Usage: validate.py SCHEMA_DIR SAMPLES_DIR
  SCHEMA_DIR holds <name>.schema.json files printed by `tether schema <name>`;
  SAMPLES_DIR holds <name>.json documents (or <name>-*.json) that must validate.
Every schema must itself be a valid draft 2020-12 schema.
"""
import json
import pathlib
import sys

try:
    import jsonschema
except ImportError:
    print("SKIP: python jsonschema is not installed; schemas not validated", file=sys.stderr)
    sys.exit(0)


def main() -> int:
    schema_dir, samples_dir = map(pathlib.Path, sys.argv[1:3])
    failures = 0
    names = [p.name.removesuffix(".schema.json") for p in schema_dir.glob("*.schema.json")]

    def owned_by_longer(name: str, sample: pathlib.Path) -> bool:
        # inventory-changes.json belongs to schema inventory-changes, not inventory.
        stem = sample.name.removesuffix(".json")
        return any(
            len(other) > len(name) and (stem == other or stem.startswith(other + "-"))
            for other in names
        )

    for schema_path in sorted(schema_dir.glob("*.schema.json")):
        name = schema_path.name.removesuffix(".schema.json")
        schema = json.loads(schema_path.read_text())
        jsonschema.Draft202012Validator.check_schema(schema)
        validator = jsonschema.Draft202012Validator(schema)
        samples = sorted(samples_dir.glob(f"{name}.json")) + sorted(samples_dir.glob(f"{name}-*.json"))
        samples = [s for s in samples if not owned_by_longer(name, s)]
        if not samples:
            print(f"FAIL: no sample documents for schema {name}", file=sys.stderr)
            failures += 1
        for sample in samples:
            errors = list(validator.iter_errors(json.loads(sample.read_text())))
            for err in errors:
                print(f"FAIL: {sample.name}: {err.json_path}: {err.message}", file=sys.stderr)
            failures += len(errors)
            if not errors:
                print(f"ok: {sample.name} valid against {schema_path.name}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
