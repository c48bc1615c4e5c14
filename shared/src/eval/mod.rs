//! Expression evaluation with unknown values.
