/** Organization secrets: write-only provider credentials; responses carry names and times only. */
import { Type } from '@sinclair/typebox';
import { checkSecretRef, type SecretStore } from '../../catalog/secrets/store.js';
import { SableError } from '../../errors/codes.js';
import { route, type Route } from '../http/router.js';
import { json } from '../http/types.js';

const secretBody = Type.Object({ value: Type.String({ minLength: 1 }) });
const secretAnswer = Type.Object({ secret_ref: Type.String(), created_at: Type.String(), updated_at: Type.String() });

export function secretRoutes(secrets: SecretStore): Route[] {
  const put = async ({ caller, params, body }: { caller: { orgId: string }; params: Record<string, string>; body: { value: string } }) => {
    const { created, record } = await secrets.put(caller.orgId, params.secretRef, body.value);
    return json(created ? 201 : 200, record);
  };
  return [
    {
      method: 'GET', path: '/org-secrets', auth: 'key', summary: 'List the secrets of the organization (names and times, never values)',
      responses: { 200: Type.Object({ secrets: Type.Array(secretAnswer) }) },
      handler: async ({ caller }) => json(200, { secrets: secrets.list(caller.orgId) }),
    },
    route({
      method: 'PUT', path: '/org-secrets/:secretRef', auth: 'key', summary: 'Store or replace a secret (201 created, 200 replaced)', body: secretBody,
      responses: { 200: secretAnswer, 201: secretAnswer },
      handler: put,
    }),
    route({
      method: 'POST', path: '/org-secrets/:secretRef', auth: 'key', summary: 'Store or replace a secret (same as PUT)', body: secretBody,
      responses: { 200: secretAnswer, 201: secretAnswer },
      handler: put,
    }),
    {
      method: 'DELETE', path: '/org-secrets/:secretRef', auth: 'key', summary: 'Delete a secret',
      handler: async ({ caller, params }) => {
        checkSecretRef(params.secretRef);
        if (!(await secrets.delete(caller.orgId, params.secretRef))) {
          throw new SableError('not_found', `secret ${params.secretRef} was not found`);
        }
        return { status: 204 };
      },
    },
  ];
}
