"""Newsletter workflows, one module per workflow; import the module you need.

* ``subscriptions`` — sign-up, double opt-in, unsubscribing, the account switch.
* ``composing`` — drafting next week's issue, sending a test.
* ``sending`` — freezing the recipients of an issue and sending it in chunks, crash-safe.
* ``bounces`` — bounces, complaints and unsubscribes reported by an ESP or DSN mail.
* ``schedule`` — the beat schedule (also written by migration 0002, from the same definition).

None of them imports ``newsletter.tasks``: the tasks call these functions, and a workflow that
hands out work takes the step that queues it as a keyword argument.
"""
