//! The cost tables fairsim ships, one per platform: every constant of
//! [`crate::cost::CostTable`] with its value, the public measurement it comes from and
//! how it was scaled to the platform. [`crate::cost::CostTableName`] selects one by name.

pub mod arm_2013;
pub mod x86_2020s;
