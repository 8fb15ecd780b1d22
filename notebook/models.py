"""The notebook: short dated notes, their topics, public corrections and checked snippets.

Two promises are kept here. A note shows *Verified* only while every one of its snippet checks
has a latest run that passed on the check's current code. A substantive fix is a
:class:`Correction` shown on the note, and every edit of a note is kept by simple-history.
"""

from __future__ import annotations

import hashlib

from django.conf import settings
from django.db import models
from django.db.models import Prefetch, Q
from django.urls import reverse
from django.utils import timezone
from simple_history.models import HistoricalRecords

from platform.models import Publishable, PublishableQuerySet


class Topic(models.Model):
    name = models.CharField(max_length=80, unique=True)
    slug = models.SlugField(max_length=80, unique=True)
    description = models.TextField(blank=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return reverse("notebook:topic", kwargs={"slug": self.slug})


class NoteQuerySet(PublishableQuerySet):
    def with_marks(self) -> NoteQuerySet:
        """Everything a listing shows (topics, Verified, Corrected) in a fixed number of queries."""
        return self.prefetch_related(
            "topics",
            Prefetch("checks", queryset=SnippetCheck.objects.select_related("latest_run")),
            Prefetch("corrections", queryset=Correction.objects.order_by("date", "id")),
        )

    def of_kind(self, kind: str) -> NoteQuerySet:
        return self.filter(kind=kind) if kind in Note.Kind.values else self

    def in_topic(self, topic: Topic) -> NoteQuerySet:
        return self.filter(topics=topic)

    def verified(self) -> NoteQuerySet:
        """Notes with at least one check, every check's latest run passed on its current code."""
        unverified = SnippetCheck.objects.filter(
            Q(latest_run__isnull=True)
            | ~Q(latest_run__status=SnippetRun.Status.PASSED)
            | ~Q(latest_run__code_hash=models.F("code_hash"))
        )
        return self.filter(checks__isnull=False).exclude(checks__in=unverified).distinct()

    def corrected(self) -> NoteQuerySet:
        return self.filter(corrections__isnull=False).distinct()

    def search(self, query: str) -> NoteQuerySet:
        """Full text search with ranking on PostgreSQL, a plain icontains match elsewhere."""
        # PostgreSQL text cannot hold NUL and control characters are never meant: drop them.
        query = "".join(ch for ch in query if ch.isprintable() or ch.isspace())
        query = " ".join(query.split())[:200]
        if not query:
            return self.none()
        if settings.ON_POSTGRES:
            from django.contrib.postgres.search import SearchQuery, SearchRank, SearchVector

            vector = (
                SearchVector("title", weight="A", config="english")
                + SearchVector("summary", weight="B", config="english")
                + SearchVector("body", weight="C", config="english")
            )
            search_query = SearchQuery(query, search_type="websearch", config="english")
            # Match with @@ (every word, websearch syntax); a positive ts_rank alone lets a note
            # holding only some of the words through.
            return (
                self.annotate(document=vector)
                .filter(document=search_query)
                .annotate(rank=SearchRank(vector, search_query))
                .order_by("-rank", "-date", "-id")
            )
        words = query.split()[:8]
        condition = Q()
        for word in words:
            condition &= (
                Q(title__icontains=word) | Q(summary__icontains=word) | Q(body__icontains=word)
            )
        return self.filter(condition)


class Note(Publishable):
    class Kind(models.TextChoices):
        CODE = "code", "Code note"
        DERIVATION = "derivation", "Derivation"
        DEBUGGING = "debugging", "Debugging"

    title = models.CharField(max_length=200)
    slug = models.SlugField(max_length=200, unique=True)
    date = models.DateField(default=timezone.localdate, db_index=True)
    kind = models.CharField(max_length=20, choices=Kind.choices, default=Kind.CODE)
    topics = models.ManyToManyField(Topic, related_name="notes", blank=True)
    summary = models.CharField(
        "why it matters", max_length=300, help_text="One line: why this note is worth reading."
    )
    body = models.TextField(help_text="Markdown with fenced code and $math$.")
    written_up_in = models.URLField("written up in (link)", blank=True)
    written_up_in_title = models.CharField("written up in (title)", max_length=200, blank=True)
    part_of = models.CharField("part of (title)", max_length=200, blank=True)
    part_of_url = models.URLField("part of (link)", blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    history = HistoricalRecords(excluded_fields=["updated_at"])

    objects = NoteQuerySet.as_manager()

    class Meta:
        ordering = ["-date", "-id"]

    def __str__(self) -> str:
        return self.title

    def get_absolute_url(self) -> str:
        return reverse("notebook:note", kwargs={"slug": self.slug})

    @property
    def is_verified(self) -> bool:
        checks = list(self.checks.all())
        return bool(checks) and all(check.is_passing for check in checks)

    @property
    def last_verified_at(self):
        """When the most recent of the (passing) latest runs finished, or None."""
        runs = [c.latest_run for c in self.checks.all() if c.latest_run is not None]
        return max((run.started_at for run in runs), default=None)

    @property
    def is_corrected(self) -> bool:
        return bool(self.corrections.all())


class Correction(models.Model):
    note = models.ForeignKey(Note, on_delete=models.CASCADE, related_name="corrections")
    date = models.DateField(default=timezone.localdate)
    what_was_wrong = models.TextField()
    what_changed = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["date", "id"]

    def __str__(self) -> str:
        return f"Correction of {self.date:%Y-%m-%d} to “{self.note}”"


class SnippetCheck(models.Model):
    note = models.ForeignKey(Note, on_delete=models.CASCADE, related_name="checks")
    name = models.CharField(max_length=120)
    code = models.TextField(help_text="Python run with the site's interpreter; print the result.")
    expected_output = models.TextField(
        blank=True, help_text="What the code must print (trailing spaces and newlines ignored)."
    )
    packages = models.CharField(
        max_length=200,
        blank=True,
        help_text="Importable names it needs, separated by spaces or commas (e.g. numpy).",
    )
    code_hash = models.CharField(max_length=64, blank=True, editable=False)
    latest_run = models.ForeignKey(
        "SnippetRun",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        editable=False,
        related_name="+",
    )

    history = HistoricalRecords(excluded_fields=["latest_run", "code_hash"])

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["note", "name"], name="notebook_check_unique_name")
        ]

    def __str__(self) -> str:
        return f"{self.note}: {self.name}"

    @property
    def package_list(self) -> list[str]:
        return [p for p in self.packages.replace(",", " ").split() if p]

    def compute_code_hash(self) -> str:
        """Hash of everything that decides a run's verdict: code, expected output, packages."""
        payload = "\x00".join([self.code, self.expected_output, " ".join(self.package_list)])
        return hashlib.sha256(payload.encode()).hexdigest()

    @property
    def is_passing(self) -> bool:
        run = self.latest_run
        return (
            run is not None
            and run.status == SnippetRun.Status.PASSED
            and run.code_hash == self.code_hash
        )

    @property
    def is_stale(self) -> bool:
        return self.latest_run is not None and self.latest_run.code_hash != self.code_hash


class SnippetRun(models.Model):
    class Status(models.TextChoices):
        PASSED = "passed", "Passed"
        FAILED = "failed", "Failed"
        ERROR = "error", "Error"
        TIMED_OUT = "timed_out", "Timed out"
        NOT_RUN = "not_run", "Not run"
        UNAVAILABLE = "unavailable", "Sandbox unavailable"

    snippet_check = models.ForeignKey(SnippetCheck, on_delete=models.CASCADE, related_name="runs")
    status = models.CharField(max_length=20, choices=Status.choices)
    output = models.TextField(blank=True)
    diff = models.TextField(blank=True)
    detail = models.TextField(blank=True, help_text="What happened, in words.")
    exit_code = models.IntegerField(null=True, blank=True)
    duration = models.FloatField(default=0.0, help_text="Seconds.")
    network_isolated = models.BooleanField(null=True)
    code_hash = models.CharField(max_length=64, blank=True)
    started_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        ordering = ["-started_at", "-id"]
        get_latest_by = "started_at"

    def __str__(self) -> str:
        when = f"{self.started_at:%Y-%m-%d %H:%M}"
        return f"{self.snippet_check.name}: {self.get_status_display()} at {when}"

    @property
    def passed(self) -> bool:
        return self.status == self.Status.PASSED
