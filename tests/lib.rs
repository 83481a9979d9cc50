//! Shared helpers for the workspace tests live in tests.rs; this library is empty on purpose (cargo needs a target).
