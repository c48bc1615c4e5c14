//! Configuration: raw HCL parsing and the validated configuration model.
