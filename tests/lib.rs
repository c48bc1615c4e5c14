//! integration test harness
