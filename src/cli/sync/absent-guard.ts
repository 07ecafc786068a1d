/*
 * The guard of `crm sync resolve --match --absent-if-missing`: an export cut short (a report's row
 * limit, a filter left on, a download that stopped) holds few of the records in doubt, and settling
 * the rest absent makes the next apply create each of them again. As the removal guard of
 * `--removed deactivate` refuses a list that would remove many, this refuses an export that would
 * settle many absent, unless `--force` says the operator means it.
 */

/** At most this many records of a type are settled absent without --force, whatever their share. */
const ABSENT_FEW = 10;

/**
 * Why `--absent-if-missing` is refused, or `undefined` when it is not: more than {@link ABSENT_FEW}
 * records of the type and more than half of its records in doubt would be settled absent.
 */
export function absentRefusal(file: string, type: string, absent: number, inDoubt: number): string | undefined {
  if (absent <= ABSENT_FEW || absent * 2 <= inDoubt) return undefined;
  return `--match ${file}: ${absent} of the ${inDoubt} ${type} in doubt are not in the export and would be settled absent, and the next apply would create them again, a duplicate of each the CRM does hold: the limit is ${ABSENT_FEW}, or half of those in doubt; an export cut short or filtered does this. If the CRM truly does not hold them, give --force`;
}
