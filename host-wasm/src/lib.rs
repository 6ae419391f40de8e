//! Browser host (see issue 5).
