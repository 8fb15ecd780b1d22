from django import template

from .. import services

register = template.Library()


@register.simple_tag
def newsletter_account(user) -> dict:
    """{'address': the verified address or None, 'subscriber': their Subscriber or None}."""
    if not getattr(user, "is_authenticated", False):
        return {"address": None, "subscriber": None}
    return {
        "address": services.verified_address(user),
        "subscriber": services.account_subscription(user),
    }
