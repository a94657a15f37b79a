"""Model providers: the OpenAI Responses API and a scripted replay model."""
