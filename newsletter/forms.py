from django import forms
from django.core.validators import RegexValidator


class SubscribeForm(forms.Form):
    email = forms.EmailField(
        max_length=254,
        error_messages={
            "required": "Enter your email address.",
            "invalid": "That does not look like an email address; check it and try again.",
        },
    )
    source = forms.CharField(
        max_length=100,
        required=False,
        validators=[RegexValidator(r"^[\w:./-]*$", "Unexpected source.")],
    )
