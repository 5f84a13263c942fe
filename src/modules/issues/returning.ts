/** @deprecated for the modules that still import it: use `returningRows` of src/database/company-scoped.repository. */
export { returningRows as returning } from '../../database/company-scoped.repository';
