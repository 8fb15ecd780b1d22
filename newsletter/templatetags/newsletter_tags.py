from django import template

from ..services import subscriptions

register = template.Library()


@register.simple_tag
def newsletter_account(user) -> dict:
    """{'address': the verified address or None, 'subscriber': their Subscriber or None}."""
    if not user.is_authenticated:
        return {"address": None, "subscriber": None}
    return {
        "address": subscriptions.verified_address(user),
        "subscriber": subscriptions.account_subscription(user),
    }
