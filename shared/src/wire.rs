//! Wire messages.
