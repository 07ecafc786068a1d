import * as z from 'zod/mini';
import { CrmValidationError } from '../core/errors';
import { issuesOf } from '../internal/endpoint/issues';

/** The most slices a generation may have. */
export const MAX_GENERATION_SLICES = 100_000;

/** `generation` of `sync.run()`: checked before anything is read or sent. */
const SyncGenerationSchema = z
  .strictObject({
    id: z.string().check(
      z.minLength(1, 'Required: a non-empty string of at most 200 characters'),
      z.maxLength(200, 'At most 200 characters'),
      z.refine((id) => id.isWellFormed(), 'Not well-formed: it holds a lone surrogate'),
    ),
    slices: z
      .int()
      .check(
        z.gte(1, `A whole number from 1 to ${MAX_GENERATION_SLICES}`),
        z.lte(MAX_GENERATION_SLICES, `A whole number from 1 to ${MAX_GENERATION_SLICES}`),
      ),
    slice: z.int().check(z.gte(0, 'A whole number from 0 to slices - 1')),
  })
  .check(
    // Said of the slice only when the count itself is right: a bad count is its own issue.
    z.refine((g) => !(Number.isInteger(g.slices) && g.slices >= 1) || g.slice < g.slices, {
      message: 'A whole number from 0 to slices - 1',
      path: ['slice'],
    }),
  );

/**
 * The generation a run joins (see {@link SyncRunOptions.generation}): one complete pass over a
 * tenant's source, made of many slices.
 */
export interface SyncGeneration {
  /** Names the pass (a date, `'2026-12-03'`): 1 to 200 characters. */
  readonly id: string;
  /** How many slices the pass has: 1 to {@link MAX_GENERATION_SLICES}. */
  readonly slices: number;
  /** Which slice this run is: from 0 to `slices - 1`. */
  readonly slice: number;
}

// The schema checks exactly this shape: the interface is written out for the reader of the docs.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const schemaIsTheType: Same<Readonly<z.infer<typeof SyncGenerationSchema>>, SyncGeneration> = true;
void schemaIsTheType;

/** `generation` checked, or a `CrmValidationError` naming each bad field (`generation.slice`...). */
function checkGeneration(value: unknown): SyncGeneration {
  const parsed = z.safeParse(SyncGenerationSchema, value);
  if (parsed.success) return parsed.data;
  const issues = issuesOf(parsed.error, 0, ['id', 'slices', 'slice']).map((issue) => ({
    ...issue,
    field: issue.field === '' ? 'generation' : `generation.${issue.field}`,
    path: ['generation', ...issue.path],
  }));
  throw new CrmValidationError(issues);
}

/**
 * The run's generation, checked, or undefined without one. Refuses (`CrmValidationError`, before
 * anything is read or sent) a bad one, and one given to a journal that keeps no generations.
 */
export function generationOf(
  journal: { readonly generations?: unknown },
  generation: unknown,
): SyncGeneration | undefined {
  if (generation === undefined) return undefined;
  const checked = checkGeneration(generation);
  if (journal.generations === undefined) {
    throw new CrmValidationError([
      {
        field: 'generation',
        path: ['generation'],
        message:
          "Needs a journal that keeps generations (postgresJournal()): memoryJournal() and sqliteJournal() run a tenant's runs one at a time, so run the whole source in one run, with removed: 'deactivate' and no generation",
      },
    ]);
  }
  return checked;
}
