"""chatlas's constructors of chats on providers other than Anthropic: each builds a
provider and a :class:`~chatlas_like.Chat` around it (above both, so that a provider
never imports the chat)."""
