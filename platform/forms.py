from allauth.account.adapter import get_adapter
from django import forms


class DeleteAccountForm(forms.Form):
    password = forms.CharField(
        label="Your password",
        widget=forms.PasswordInput(attrs={"autocomplete": "current-password"}),
        strip=False,
    )
    confirm = forms.BooleanField(
        label="I understand that my progress, answers and subscription will be deleted for good."
    )

    def __init__(self, *args, user, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.user = user

    def clean_password(self) -> str:
        """Checked through allauth's adapter, so a wrong password counts toward the account's
        failed-login limit and the check is refused (code too_many_login_attempts) once it
        trips."""
        password = self.cleaned_data["password"]
        if not get_adapter().reauthenticate(self.user, password):
            raise forms.ValidationError("That is not your password.", code="wrong_password")
        return password
