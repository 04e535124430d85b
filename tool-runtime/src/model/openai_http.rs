//! `OpenAiChat`: a client for OpenAI-compatible Chat Completions endpoints.

/// A client for an OpenAI-compatible Chat Completions endpoint.
#[derive(Debug)]
pub struct OpenAiChat {}
