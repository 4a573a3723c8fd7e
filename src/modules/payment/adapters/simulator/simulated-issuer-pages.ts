import type { IssuerPageView, SimulatedProcessor } from './simulated-processor.ts';

/** The simulated issuer's page, for the gateway: the page of a signed challenge link, and where its answer sends the customer. */
export interface SimulatedIssuerPages {
  page(processorRef: string, query: Readonly<Record<string, string | undefined>>): IssuerPageView | undefined;
  answer(processorRef: string, query: Readonly<Record<string, string | undefined>>, code: string): string | undefined;
}

/** The issuer pages of the simulated routes: each challenge link is answered by the instance that signed it. */
export function createSimulatedIssuerPages(processors: readonly SimulatedProcessor[]): SimulatedIssuerPages {
  const owner = (ref: string) => processors.find((p) => p.owns(ref));
  return {
    page: (ref, query) => owner(ref)?.issuerPage(ref, query),
    answer(ref, query, code) {
      const processor = owner(ref);
      const page = processor?.issuerPage(ref, query);
      return processor && page ? processor.answerChallenge(page, code) : undefined;
    },
  };
}
