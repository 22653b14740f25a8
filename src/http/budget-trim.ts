// What a request whose plan the key's budget trimmed (src/limits/affordable.ts) tells: the dropped
// targets in x-gateway-budget-dropped on its answer or error, and the count for operators.
import type { ServerResponse } from 'node:http';
import { BUDGET_DROPPED_HEADER } from '../limits/affordable.ts';
import type { Services } from './services.ts';
import { headerText } from '../util/header-text.ts';

export function reportTrimmed(svc: Services, res: ServerResponse, mode: 'router' | 'named', droppedIds: readonly string[]): void {
  // Model ids come from provider files and may be in any script.
  res.setHeader(BUDGET_DROPPED_HEADER, headerText(droppedIds.join(', ')));
  svc.metrics.budgetTrimmedTotal.inc({ mode });
}
