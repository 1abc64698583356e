"""run.json's compact form (format 9 on): each cell's repetitions stored as columns, not as rows.

A sweep's run holds thousands of repetitions, each repeating the same thirty keys of its parsed result;
stored as one list per field (and per field of the result, where every repetition has one) the same
document takes a quarter of the bytes. Only the file is columnar: a run read back has its repetitions as
rows again, as the model and every page use them, and a row-shaped document still reads.
"""

from __future__ import annotations

from typing import Any

from benchsite.errors import BenchError

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


def as_rows(stored: Any, where: str = "", prefix: str = "") -> Any:
    """The rows a `as_columns` value came from (anything else unchanged); columns of unequal lengths are a
    one-line error saying where (`where`: "cell c1 of subject framework") and which."""
    if not (isinstance(stored, dict) and list(stored) == [COLUMNS] and isinstance(stored[COLUMNS], dict)):
        return stored
    columns = {name: as_rows(values, where, f"{prefix}{name}.") for name, values in stored[COLUMNS].items()}
    if not columns or not all(isinstance(values, list) for values in columns.values()):
        return stored  # not a table of columns: validation names the problem
    lengths = {name: len(values) for name, values in columns.items()}
    first, *others = lengths
    uneven = next((name for name in others if lengths[name] != lengths[first]), None)
    if uneven is not None:
        raise BenchError(
            f"{where or 'repetitions'}: column {prefix}{uneven} has {lengths[uneven]} values, {prefix}{first} has "
            f"{lengths[first]}: the file was cut or edited; restore the run from git"
        )
    return [{name: values[index] for name, values in columns.items()} for index in range(lengths[first])]


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


def _where(cell: dict[str, Any], subject: dict[str, Any]) -> str:
    return f"cell {cell.get('name', '?')} of subject {subject.get('name', '?')}"


def read_form(stored: Any) -> Any:
    """A decoded run.json with every cell's repetitions as rows again (a row-shaped one unchanged); the
    decoded document itself is left as it was."""
    if not _cells(stored):
        return stored
    subjects = []
    for subject in stored["subjects"]:
        if isinstance(subject, dict) and isinstance(subject.get("cells"), list):
            cells = [
                {**cell, "repetitions": as_rows(cell.get("repetitions"), _where(cell, subject))}
                if isinstance(cell, dict)
                else cell
                for cell in subject["cells"]
            ]
            subject = {**subject, "cells": cells}
        subjects.append(subject)
    return {**stored, "subjects": subjects}
