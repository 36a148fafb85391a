//! Structure-aware: a generated document model (the `arbitrary` feature of
//! clada-markers), printed, must parse back without errors to the same
//! operations, and printing the parse again must give the same text.

#![no_main]

use clada_markers::generate::Model;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|model: Model| {
    let Ok(printed) = model.print() else {
        return;
    };
    let doc = clada_markers::parse(&printed);
    assert!(!doc.has_errors(), "{printed}\n{:#?}", doc.diagnostics);
    let ops: Vec<_> = doc.tasks().filter_map(|t| t.op.clone()).collect();
    assert_eq!(ops, model.ops(), "{printed}");
    assert_eq!(clada_markers::print(&doc.units).ok(), Some(printed));
});
