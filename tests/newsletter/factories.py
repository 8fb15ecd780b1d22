import factory
from django.utils import timezone

from newsletter.models import Issue, Subscriber


class SubscriberFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Subscriber

    email = factory.Sequence(lambda n: f"reader{n}@example.com")
    name = factory.Sequence(lambda n: f"Reader {n}")
    status = Subscriber.Status.CONFIRMED
    source = "footer"
    confirmed_at = factory.LazyFunction(timezone.now)


class IssueFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Issue

    subject = factory.Sequence(lambda n: f"Letter {n}")
    body = "Hello from the letter.\n\nThe scores are $\\frac{QK^\\top}{\\sqrt{d_k}}$ this week."
    status = Issue.Status.DRAFT


def confirmed_subscribers(count: int, *, prefix: str = "r") -> list[Subscriber]:
    """Many confirmed subscribers in one INSERT."""
    now = timezone.now()
    return Subscriber.objects.bulk_create(
        Subscriber(
            email=f"{prefix}{i}@example.com",
            name=f"Reader {i}",
            status=Subscriber.Status.CONFIRMED,
            confirmed_at=now,
        )
        for i in range(count)
    )
