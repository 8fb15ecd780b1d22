"""Forms that read learners' answers. Each one refuses, with a message a person can act on,
anything that does not belong to the chapter or equation it was built for."""

from __future__ import annotations

import re

from django import forms
from django.core.exceptions import ValidationError

from .models import Choice, EquationPart, Question

_QUESTION_KEY = re.compile(r"^q(\d+)$")
_PART_KEY = re.compile(r"^part-(\d+)$")


def _foreign_keys(data, pattern: re.Pattern[str], known: set[str]) -> list[str]:
    return sorted(key for key in data if pattern.match(key) and key not in known)


class CheckForm(forms.Form):
    """Answers to a chapter's check: ``q<question id>`` = choice id for each answered question.

    ``only`` = a question id grades that one question; ``show`` = a question id asks to be shown
    its answer ("Show me", an answer with no choice); with neither, every answered question on
    the page is graded ("Check all").
    """

    only = forms.CharField(required=False)
    show = forms.CharField(required=False)

    def __init__(self, *args, questions: list[Question], **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.questions = questions
        for number, question in enumerate(questions, start=1):
            self.fields[f"q{question.pk}"] = forms.TypedChoiceField(
                choices=[(str(c.pk), c.text) for c in question.choices.all()],
                coerce=int,
                empty_value=None,
                required=False,
                widget=forms.RadioSelect,
                error_messages={
                    "invalid_choice": f"That answer is not one of question {number}'s choices."
                },
            )

    def _question(self, value: str) -> Question | None:
        if not value:
            return None
        by_id = {str(q.pk): q for q in self.questions}
        if value not in by_id:
            raise ValidationError("That question is not part of this chapter's check.")
        return by_id[value]

    def clean_only(self) -> Question | None:
        return self._question(self.cleaned_data["only"])

    def clean_show(self) -> Question | None:
        return self._question(self.cleaned_data["show"])

    def clean(self) -> dict:
        cleaned = super().clean()
        assert cleaned is not None  # Form.clean returns cleaned_data
        foreign = _foreign_keys(self.data, _QUESTION_KEY, set(self.fields))
        if foreign:
            raise ValidationError("Some answers are for questions that are not in this chapter.")
        if self.errors:
            return cleaned
        shown = cleaned.get("show")
        if shown is not None:
            cleaned["answers"] = [(shown, None)]
            return cleaned
        choices = {c.pk: c for q in self.questions for c in q.choices.all()}
        answers: list[tuple[Question, Choice | None]] = []
        only = cleaned.get("only")
        for number, question in enumerate(self.questions, start=1):
            if only is not None and question != only:
                continue
            choice_id = cleaned.get(f"q{question.pk}")
            if choice_id is None:
                if only is not None:
                    raise ValidationError(f"Pick an answer to question {number} first.")
                continue
            answers.append((question, choices[choice_id]))
        if not answers:
            raise ValidationError("Pick an answer to at least one question first.")
        cleaned["answers"] = answers
        return cleaned

    def selected(self) -> dict[int, int]:
        """Question id → chosen choice id, as sent (for showing the form again)."""
        picked: dict[int, int] = {}
        for question in self.questions:
            raw = self.data.get(f"q{question.pk}", "")
            if raw.isdigit() and any(str(c.pk) == raw for c in question.choices.all()):
                picked[question.pk] = int(raw)
        return picked


class LabelForm(forms.Form):
    """A role for every part of one equation: ``part-<part id>`` = role."""

    def __init__(self, *args, parts: list[EquationPart], **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.parts = parts
        for number, part in enumerate(parts, start=1):
            self.fields[f"part-{part.pk}"] = forms.ChoiceField(
                choices=EquationPart.Role.choices,
                error_messages={
                    "required": f"Choose a role for part {number}.",
                    "invalid_choice": f"Part {number}: pick one of output, input, learned, "
                    "constant or operation.",
                },
            )

    def clean(self) -> dict:
        cleaned = super().clean()
        assert cleaned is not None  # Form.clean returns cleaned_data
        if _foreign_keys(self.data, _PART_KEY, set(self.fields)):
            raise ValidationError("Some roles are for parts that are not in this equation.")
        if not self.errors:
            cleaned["roles"] = [(part, cleaned[f"part-{part.pk}"]) for part in self.parts]
        return cleaned

    def selected(self) -> dict[int, str]:
        roles = set(EquationPart.Role.values)
        return {
            part.pk: self.data[f"part-{part.pk}"]
            for part in self.parts
            if self.data.get(f"part-{part.pk}") in roles
        }


class FinishForm(forms.Form):
    finished = forms.TypedChoiceField(
        choices=[("1", "finished"), ("0", "not finished")],
        coerce=lambda value: value == "1",
        error_messages={
            "required": "Say whether the chapter is finished.",
            "invalid_choice": "Say whether the chapter is finished.",
        },
    )


class ReviewAnswerForm(forms.Form):
    """One try at a question card in the review session: a ``choice``, or ``show`` ("Show me")."""

    choice = forms.TypedChoiceField(
        coerce=int,
        empty_value=None,
        required=False,
        widget=forms.RadioSelect,
        error_messages={"invalid_choice": "That answer is not one of this question's choices."},
    )
    show = forms.BooleanField(required=False)

    def __init__(self, *args, question: Question, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.question = question
        self.choices = {c.pk: c for c in question.choices.all()}
        self.fields["choice"].choices = [(str(pk), c.text) for pk, c in self.choices.items()]  # type: ignore[attr-defined]

    def clean(self) -> dict:
        cleaned = super().clean()
        assert cleaned is not None  # Form.clean returns cleaned_data
        if self.errors:
            return cleaned
        if cleaned.get("show"):
            cleaned["answer"] = None
        elif cleaned.get("choice") is None:
            raise ValidationError("Pick an answer first, or press “Show me”.")
        else:
            cleaned["answer"] = self.choices[cleaned["choice"]]
        return cleaned


class ReminderForm(forms.Form):
    """The account page's opt-in for review reminder emails (an unticked box sends nothing)."""

    enabled = forms.BooleanField(required=False)
