"""The benchmark vocabularies cover every label the taxonomy projects to, and nothing is spelled twice."""

from __future__ import annotations

from synth import forms, vocab
from synth.taxonomy import ERROR_FAMILIES, ERROR_SUBTYPES


def test_every_taxonomy_projection_is_a_label_of_its_benchmark() -> None:
    for s in ERROR_SUBTYPES:
        assert s.errorradar is None or s.errorradar in vocab.ERRORRADAR_NAMES, s.subtype
        assert s.fermat is None or s.fermat in vocab.FERMAT_AXES, s.subtype
        assert s.mmerror is None or s.mmerror in vocab.MMERROR_OPTIONS, s.subtype


def test_the_family_labels_are_the_taxonomy_error_families_that_are_errors() -> None:
    errors = {s.family for s in ERROR_SUBTYPES if s.is_error}
    assert [f for f, _ in vocab.FAMILY_DEFINITIONS] == [f for f in ERROR_FAMILIES if f in errors]


def test_fermat_names_exist_only_for_taxonomy_subtypes() -> None:
    assert set(vocab.FERMAT_TYPES) <= {s.subtype for s in ERROR_SUBTYPES}


def test_the_forms_use_the_vocabulary_objects_themselves() -> None:
    # One spelling: the forms re-export the vocabulary's tables rather than keeping copies.
    assert forms.ERRORRADAR_NAMES is vocab.ERRORRADAR_NAMES
    assert forms.MMERROR_OPTIONS is vocab.MMERROR_OPTIONS and forms.MMERROR_NO_ERROR is vocab.MMERROR_NO_ERROR
    assert forms.MATHREAL_SUBTYPES is vocab.MATHREAL_SUBTYPES
