// The response validators, loaded on demand (PERFORMANCE.md, "Generated response validators"),
// with the record-by-record check of a page they refuse, which only runs once they are here.
export { envelopeValidators, recordValidators } from './envelope-validators.generated';
export { checkPage } from './page-check';
