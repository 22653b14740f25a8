// What a request whose plan the key's budget trimmed (src/limits/affordable.ts) tells: the dropped
// targets in x-gateway-budget-dropped on its answer or error, and the count for operators.
import type { ServerResponse } from 'node:http';
import { BUDGET_DROPPED_HEADER } from '../limits/affordable.ts';
import type { Services } from './services.ts';

export function reportTrimmed(svc: Services, res: ServerResponse, mode: 'router' | 'named', droppedIds: readonly string[]): void {
  res.setHeader(BUDGET_DROPPED_HEADER, droppedIds.join(', '));
  svc.metrics.budgetTrimmedTotal.inc({ mode });
}
