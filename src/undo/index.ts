export { planUndo, type UndoAction, type UndoConflict, type UndoPlan, type CurrentCopy } from './plan-undo.js';
export { findUndoTarget, undoRun, type UndoDeps, type UndoOptions } from './undo-run.js';
export { formatUndoReport, type UndoOutcome, type UndoReport, type UndoReportView } from './report.js';
