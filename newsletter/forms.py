import re

from django import forms

SOURCE = re.compile(r"[\w:./-]{0,100}")


class SourceField(forms.Field):
    """Which box a sign-up came from ("chapter:rope", "footer"): a hidden input the reader
    cannot fix, so a value that is not such a label is dropped instead of refusing the sign-up.
    """

    def clean(self, value) -> str:
        value = value.strip() if isinstance(value, str) else ""
        return value if SOURCE.fullmatch(value) else ""


class SubscribeForm(forms.Form):
    email = forms.EmailField(
        max_length=254,
        error_messages={
            "required": "Enter your email address.",
            "invalid": "That does not look like an email address; check it and try again.",
        },
    )
    source = SourceField(required=False)
