"""Notebook factories: topics, notes, checks, runs and corrections."""

import datetime as dt

import factory

from notebook.models import Correction, Note, SnippetCheck, SnippetRun, Topic


class TopicFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Topic
        django_get_or_create = ["slug"]

    name = factory.Sequence(lambda n: f"Topic {n}")
    slug = factory.Sequence(lambda n: f"topic-{n}")
    description = "Notes on one subject."


class NoteFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Note
        skip_postgeneration_save = True

    title = factory.Sequence(lambda n: f"Note number {n}")
    slug = factory.Sequence(lambda n: f"note-{n}")
    date = factory.Sequence(lambda n: dt.date(2026, 1, 1) + dt.timedelta(days=n))
    kind = Note.Kind.CODE
    summary = "Why it matters, in one line."
    body = "A body with `code` and $x^2$."
    published = True

    @factory.post_generation
    def topics(obj, create, extracted, **kwargs):
        if create and extracted:
            obj.topics.set(extracted)


class SnippetCheckFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = SnippetCheck

    note = factory.SubFactory(NoteFactory)
    name = factory.Sequence(lambda n: f"check {n}")
    code = "print(6 * 7)"
    expected_output = "42"
    packages = ""


class SnippetRunFactory(factory.django.DjangoModelFactory):
    """A recorded run; ``latest=True`` (default) makes it the check's latest run."""

    class Meta:
        model = SnippetRun
        skip_postgeneration_save = True

    snippet_check = factory.SubFactory(SnippetCheckFactory)
    status = SnippetRun.Status.PASSED
    output = "42\n"
    duration = 0.05
    code_hash = factory.LazyAttribute(lambda run: run.snippet_check.compute_code_hash())

    @factory.post_generation
    def latest(obj, create, extracted, **kwargs):
        if create and extracted is not False:
            SnippetCheck.objects.filter(pk=obj.snippet_check_id).update(latest_run=obj)
            obj.snippet_check.latest_run = obj


class CorrectionFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Correction

    note = factory.SubFactory(NoteFactory)
    date = dt.date(2026, 3, 1)
    what_was_wrong = "The note said the step costs O(1)."
    what_changed = "It now says O(t)."
