// The five-field form every test and bench uses (AEP-0002 §7 worked example): a required string,
// a bounded number, a boolean, a multi select and a select with "other".
import type { FieldSpec } from '@aep/protocol';

/** Fields of the "Configure the nightly backup" form, real labels. */
export const BACKUP_FORM_FIELDS: readonly FieldSpec[] = [
  { id: '1', type: 'string', label: 'Bucket name', required: true },
  { id: '2', type: 'number', label: 'Retention (days)', min: 1, max: 365 },
  { id: '3', type: 'boolean', label: 'Encrypt at rest?' },
  {
    id: '4',
    type: 'select',
    label: 'Weekdays',
    multi: true,
    choices: [
      { id: '1', label: 'Mon' },
      { id: '2', label: 'Wed' },
      { id: '3', label: 'Fri' },
    ],
  },
  {
    id: '5',
    type: 'select',
    label: 'Storage class',
    other: true,
    choices: [
      { id: '1', label: 'standard' },
      { id: '2', label: 'archive' },
    ],
  },
];
