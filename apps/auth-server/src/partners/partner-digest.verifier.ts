import { Injectable } from '@nestjs/common';
import type { VerifiedPartner } from '@svc/contracts';
import { sha256Hex } from '@svc/platform';
import { PartnerVerifier } from '@svc/security';
import { PartnersService } from './partners.service';

/**
 * auth-server's own Basic routes check credentials against its own store, with the same rule the
 * other apps reach over RPC (`auth.partners.verify`): no round trip through the broker to itself.
 */
@Injectable()
export class PartnerDigestVerifier extends PartnerVerifier {
  constructor(private readonly partners: PartnersService) {
    super();
  }

  async verify(clientId: string, clientSecret: string): Promise<VerifiedPartner | undefined> {
    if (clientId.length > 200) return undefined;
    const answer = await this.partners.verifyDigest({
      client_id: clientId,
      secret_digest: sha256Hex(clientSecret),
    });
    return answer.valid ? answer.partner : undefined;
  }
}
