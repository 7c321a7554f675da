/** Organization secrets: write-only provider credentials; responses carry names and times only. */
import { ApiError } from '../errors.js';
import type { Route } from '../http/router.js';
import { json } from '../http/types.js';
import { checkSecretRef, type SecretStore } from '../secrets/store.js';

const secretBody = {
  type: 'object',
  required: ['value'],
  properties: { value: { type: 'string', minLength: 1 } },
} as const;

export function secretRoutes(secrets: SecretStore): Route[] {
  const put: Route['handler'] = async ({ caller, params, body }) => {
    const { created, record } = await secrets.put(caller.orgId, params.secretRef, (body as { value: string }).value);
    return json(created ? 201 : 200, record);
  };
  return [
    {
      method: 'GET', path: '/org-secrets', auth: 'key', summary: 'List the secrets of the organization (names and times, never values)',
      handler: async ({ caller }) => json(200, { secrets: secrets.list(caller.orgId) }),
    },
    {
      method: 'PUT', path: '/org-secrets/:secretRef', auth: 'key', summary: 'Store or replace a secret (201 created, 200 replaced)', body: secretBody,
      handler: put,
    },
    {
      method: 'POST', path: '/org-secrets/:secretRef', auth: 'key', summary: 'Store or replace a secret (same as PUT)', body: secretBody,
      handler: put,
    },
    {
      method: 'DELETE', path: '/org-secrets/:secretRef', auth: 'key', summary: 'Delete a secret',
      handler: async ({ caller, params }) => {
        checkSecretRef(params.secretRef);
        if (!(await secrets.delete(caller.orgId, params.secretRef))) {
          throw new ApiError('not_found', `secret ${params.secretRef} was not found`);
        }
        return { status: 204 };
      },
    },
  ];
}
