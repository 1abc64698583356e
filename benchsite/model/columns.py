"""run.json's compact form (format 9 on): each cell's repetitions stored as columns, not as rows.

A sweep's run holds thousands of repetitions, each repeating the same thirty keys of its parsed result;
stored as one list per field (and per field of the result, where every repetition has one) the same
document takes a quarter of the bytes. Only the file is columnar: a run read back has its repetitions as
rows again, as the model and every page use them, and a row-shaped document still reads.
"""

from __future__ import annotations

from typing import Any

COLUMNS = "columns"  # {"columns": {field: [each row's value]}} stands where a list of rows stood


def as_columns(rows: list[Any]) -> Any:
    """Rows with the same fields as one list per field (recursively for a field that is itself such a row
    in every one of them); rows of differing fields, of no field, or no rows, stay as they are."""
    if not rows or not all(isinstance(row, dict) for row in rows):
        return rows
    fields = list(rows[0])
    if not fields or any(list(row) != fields for row in rows):
        return rows
    return {COLUMNS: {name: as_columns([row[name] for row in rows]) for name in fields}}


def as_rows(stored: Any) -> Any:
    """The rows a `as_columns` value came from (anything else unchanged)."""
    if not (isinstance(stored, dict) and list(stored) == [COLUMNS] and isinstance(stored[COLUMNS], dict)):
        return stored
    columns = {name: as_rows(values) for name, values in stored[COLUMNS].items()}
    lengths = {len(values) for values in columns.values() if isinstance(values, list)}
    if len(lengths) != 1 or len(columns) != sum(isinstance(v, list) for v in columns.values()):
        return stored  # not a table of equal columns: validation names the problem
    [count] = lengths
    return [{name: values[index] for name, values in columns.items()} for index in range(count)]


def _cells(document: Any) -> list[dict[str, Any]]:
    if not isinstance(document, dict) or not isinstance(document.get("subjects"), list):
        return []
    return [
        cell
        for subject in document["subjects"]
        if isinstance(subject, dict) and isinstance(subject.get("cells"), list)
        for cell in subject["cells"]
        if isinstance(cell, dict)
    ]


def stored_form(document: dict[str, Any]) -> dict[str, Any]:
    """A run document (rows) as run.json stores it: every cell's repetitions as columns."""
    copy = {**document, "subjects": [{**subject, "cells": list(subject["cells"])} for subject in document["subjects"]]}
    for subject in copy["subjects"]:
        subject["cells"] = [{**cell, "repetitions": as_columns(cell["repetitions"])} for cell in subject["cells"]]
    return copy


def read_form(stored: Any) -> Any:
    """A decoded run.json with every cell's repetitions as rows again (a row-shaped one unchanged); the
    decoded document itself is left as it was."""
    if not _cells(stored):
        return stored
    subjects = []
    for subject in stored["subjects"]:
        if isinstance(subject, dict) and isinstance(subject.get("cells"), list):
            cells = [
                {**cell, "repetitions": as_rows(cell.get("repetitions"))} if isinstance(cell, dict) else cell
                for cell in subject["cells"]
            ]
            subject = {**subject, "cells": cells}
        subjects.append(subject)
    return {**stored, "subjects": subjects}
