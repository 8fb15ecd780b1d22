"""factory-boy factories shared across apps. Each app adds its own in tests/<app>/factories.py."""

import factory
from django.contrib.auth import get_user_model


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        skip_postgeneration_save = True

    email = factory.Sequence(lambda n: f"person{n}@example.com")
    username = factory.Sequence(lambda n: f"person{n}")
    password = factory.PostGenerationMethodCall("set_password", "correct horse battery staple 42")

    @factory.post_generation
    def verified(obj, create, extracted, **kwargs):
        """Give the user a verified primary address, as allauth would after confirmation."""
        from allauth.account.models import EmailAddress

        obj.save()
        if create and extracted is not False:
            EmailAddress.objects.create(user=obj, email=obj.email, primary=True, verified=True)
