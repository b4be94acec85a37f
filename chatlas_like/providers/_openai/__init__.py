"""OpenAI's two APIs: the Responses API and Chat Completions (and the servers speaking it)."""
