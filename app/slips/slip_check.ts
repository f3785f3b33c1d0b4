import { readQrTexts } from '#slips/qr_reader'
import { parseSlipText } from '#slips/mini_qr'
import { askSlipVerifiers } from '#slips/verifiers/registry'
import { referenceUses, slipForensics } from '#slips/forensics'
import { verifySlip, type SlipReading, type Verification } from '#slips/verification'
import type { SlipFacts, SlipOrder } from '#slips/verifiers/slip_verifier'

/**
 * What the image's QR codes say: the first slip mini-QR among them; else a
 * QR that is something else (a PromptPay payment QR, a bad CRC, random
 * text); else no QR at all.
 */
export async function readSlip(image: Uint8Array): Promise<SlipReading> {
  const texts = await readQrTexts(image)
  let other: SlipReading | null = null
  for (const text of texts) {
    const parsed = parseSlipText(text)
    if (parsed.kind === 'slip') {
      return {
        kind: 'slip',
        qrText: text,
        sendingBank: parsed.sendingBank,
        transRef: parsed.transRef,
        transDate: parsed.transDate,
      }
    }
    if (!other || (other.kind === 'not_slip' && other.what === 'garbage')) {
      other = { kind: 'not_slip', qrText: text, what: parsed.kind }
    }
  }
  return other ?? { kind: 'no_qr' }
}

export type { SourceAnswer } from '#slips/verifiers/registry'

/** The outcome of checking one slip, and what is kept of it on the slip row. */
export interface SlipCheck {
  verification: Verification
  facts: SlipFacts | null
  /** The `verification` column: checks, facts and their source, forensics. */
  record: Record<string, unknown>
}

/**
 * Asks the configured sources, in order, until one knows the transaction
 * (askSlipVerifiers: a source that cannot answer is noted and the next one
 * asked; with no facts the slip stays pending and is checked again later).
 */
async function establishFacts(reading: SlipReading, target: SlipOrder) {
  if (reading.kind !== 'slip') return { facts: null, refusal: null, answers: [] }
  const reference = {
    sendingBank: reading.sendingBank,
    transRef: reading.transRef,
    qrText: reading.qrText,
  }
  return askSlipVerifiers(reference, target)
}

/**
 * Checks a slip against its order: the sources' facts, where else its image
 * and transaction reference were seen, then the rules. Reads only; the
 * caller stores the result. `slipId` is the slip's own row when re-checking
 * (it is not "another slip").
 */
export async function checkSlip(input: {
  reading: SlipReading
  sha256: string
  target: SlipOrder
  slipId?: number | null
}): Promise<SlipCheck> {
  const { reading, target } = input
  const { facts, refusal, answers } = await establishFacts(reading, target)
  const transRef = reading.kind === 'slip' ? reading.transRef : null
  const forensics = await slipForensics(input.sha256, transRef, input.slipId ?? null)
  const { order, account } = target
  const verification = verifySlip(
    reading,
    facts,
    {
      id: order.id,
      channel: order.channel,
      transferAmount: order.transferAmount,
      paymentReference: order.paymentReference,
      orderAt: order.orderAt,
      expireAt: order.expireAt,
      account: {
        accountNo: account.accountNo,
        promptpayId: account.promptpayId,
        billerId: account.billerId,
      },
    },
    referenceUses(forensics, input.slipId ?? null),
    refusal
  )
  return {
    verification,
    facts,
    record: {
      qr: {
        kind: reading.kind,
        sending_bank: reading.kind === 'slip' ? reading.sendingBank || null : null,
        trans_ref: transRef,
        trans_date: reading.kind === 'slip' ? reading.transDate : null,
      },
      sources: answers,
      ...(refusal ? { refusal } : {}),
      facts: facts && {
        source: facts.source,
        amount: facts.amount,
        receiver: facts.receiver,
        transferred_at: facts.transferredAt?.toUTC().toISO() ?? null,
        reference1: facts.reference1,
        claimed_by: facts.claimedBy,
        evidence: facts.evidence,
      },
      checks: verification.checks,
      forensics,
    },
  }
}
