"""Serving generated pages: sandboxed to an opaque origin under a strict Content-Security-Policy."""
