import { runPart } from './run-part';

runPart(__filename);
