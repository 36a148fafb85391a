//! The JSON Schemas of the reports (`clada schema check|apply`), made from
//! their types.

use super::ApplyReport;
use super::check::CheckReport;

/// The reports with a published JSON Schema.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Schema {
    Check,
    Apply,
}

impl Schema {
    /// The JSON Schema of this report (`clada schema check|apply`).
    pub fn json_schema(self) -> schemars::Schema {
        match self {
            Schema::Check => check_schema(),
            Schema::Apply => apply_schema(),
        }
    }
}

/// The JSON Schema of the report of `clada apply --format json`.
pub fn apply_schema() -> schemars::Schema {
    generator().into_root_schema_for::<ApplyReport>()
}

/// The JSON Schema of the report of `clada check --format json`.
pub fn check_schema() -> schemars::Schema {
    generator().into_root_schema_for::<CheckReport>()
}

/// Draft 2020-12 with only the formats it defines: schemars marks Rust's
/// number types with formats of its own (`uint`, `uint32`, `double`…),
/// which validators warn about or refuse; an unsigned integer keeps its
/// `minimum: 0`.
fn generator() -> schemars::SchemaGenerator {
    schemars::generate::SchemaSettings::draft2020_12()
        .with_transform(schemars::transform::RestrictFormats::default())
        .into_generator()
}
