/**
 * The sandbox bank's transfer slip: a portrait picture like a mobile-banking
 * app's slip (bank-coloured header, "transfer successful", amount, masked
 * sender and receiver, Bangkok date and time, reference, mini-QR), so that
 * slip upload can be tried end to end with an image a person would send.
 *
 * The slip is an SVG drawn here and rasterised by sharp (librsvg; Thai text
 * with the system's Thai fonts); the QR is drawn as SVG squares from the
 * `qrcode` package's module matrix, so it stays sharp at any size.
 */

import type { DateTime } from 'luxon'
import QRCode from 'qrcode'
import sharp from 'sharp'
import { formatAmount } from '#core/money'

export interface SlipImageInput {
  /** Bank code of the sending bank, e.g. KBANK. */
  bankCode: string
  /** Transferred amount in satang. */
  amount: number
  senderName: string
  senderAccountMasked: string
  receiverName: string
  receiverAccountMasked: string
  transferredAt: DateTime
  transRef: string
  /** Text of the slip mini-QR. */
  miniQr: string
  format: 'png' | 'jpg'
}

const WIDTH = 720
const HEIGHT = 1280
const FONT = "Loma, Garuda, Waree, 'DejaVu Sans', sans-serif"

interface BankLook {
  nameTh: string
  nameEn: string
  colour: string
  /** Header text colour: dark on light brand colours. */
  ink: string
}

const BANK_LOOKS: Record<string, BankLook> = {
  BAAC: { nameTh: 'ธ.ก.ส.', nameEn: 'BAAC', colour: '#4b9b1d', ink: '#ffffff' },
  BAY: { nameTh: 'กรุงศรี', nameEn: 'Krungsri', colour: '#fec43b', ink: '#4d3b2a' },
  BBL: { nameTh: 'กรุงเทพ', nameEn: 'Bangkok Bank', colour: '#1e4598', ink: '#ffffff' },
  CIMB: { nameTh: 'ซีไอเอ็มบี ไทย', nameEn: 'CIMB Thai', colour: '#7e2f36', ink: '#ffffff' },
  CITI: { nameTh: 'ซิตี้แบงก์', nameEn: 'Citibank', colour: '#1583c9', ink: '#ffffff' },
  GHB: { nameTh: 'ธอส.', nameEn: 'GH Bank', colour: '#f57d23', ink: '#ffffff' },
  GSB: { nameTh: 'ออมสิน', nameEn: 'GSB', colour: '#eb198d', ink: '#ffffff' },
  KBANK: { nameTh: 'กสิกรไทย', nameEn: 'KASIKORNBANK', colour: '#138f2d', ink: '#ffffff' },
  KK: { nameTh: 'เกียรตินาคินภัทร', nameEn: 'Kiatnakin Phatra', colour: '#199cc5', ink: '#ffffff' },
  KTB: { nameTh: 'กรุงไทย', nameEn: 'Krungthai', colour: '#1ba5e1', ink: '#ffffff' },
  LH: { nameTh: 'แลนด์ แอนด์ เฮ้าส์', nameEn: 'LH Bank', colour: '#6d6e71', ink: '#ffffff' },
  SC: {
    nameTh: 'สแตนดาร์ดชาร์เตอร์ด',
    nameEn: 'Standard Chartered',
    colour: '#0473ea',
    ink: '#ffffff',
  },
  SCB: { nameTh: 'ไทยพาณิชย์', nameEn: 'SCB', colour: '#4e2e7f', ink: '#ffffff' },
  SCIB: { nameTh: 'นครหลวงไทย', nameEn: 'Siam City Bank', colour: '#8a1538', ink: '#ffffff' },
  TISCO: { nameTh: 'ทิสโก้', nameEn: 'TISCO', colour: '#12549f', ink: '#ffffff' },
  TTB: { nameTh: 'ทีทีบี', nameEn: 'ttb', colour: '#0050f0', ink: '#ffffff' },
  UOB: { nameTh: 'ยูโอบี', nameEn: 'UOB', colour: '#0b3979', ink: '#ffffff' },
}

function bankLook(bankCode: string): BankLook {
  return (
    BANK_LOOKS[bankCode] ?? {
      nameTh: 'ธนาคาร',
      nameEn: bankCode,
      colour: '#44546a',
      ink: '#ffffff',
    }
  )
}

/** "xxx-x-x6789-x": how Thai slips show an account number. */
export function maskAccountNo(accountNo: string): string {
  const digits = accountNo.replace(/\D/g, '')
  return `xxx-x-x${digits.slice(-5, -1).padStart(4, 'x')}-x`
}

function escapeXml(text: string): string {
  return text
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
}

/** 123456 satang → "1,234.56". */
function groupedAmount(satang: number): string {
  const [baht, decimals] = formatAmount(satang).split('.')
  return `${baht.replace(/\B(?=(\d{3})+(?!\d))/g, ',')}.${decimals}`
}

function svgText(
  x: number,
  y: number,
  content: string,
  options: { size: number; fill?: string; weight?: 'bold'; anchor?: 'middle' | 'end' }
) {
  const attributes = [
    `x="${x}"`,
    `y="${y}"`,
    `font-size="${options.size}"`,
    `fill="${options.fill ?? '#1f2933'}"`,
    options.weight ? `font-weight="${options.weight}"` : '',
    options.anchor ? `text-anchor="${options.anchor}"` : '',
  ]
  return `<text ${attributes.join(' ')}>${escapeXml(content)}</text>`
}

/** The QR's dark modules as one SVG path in a `size` × `size` square at (x, y), quiet zone included. */
function qrSvg(payload: string, x: number, y: number, size: number): string {
  const { modules } = QRCode.create(payload, { errorCorrectionLevel: 'M' })
  const quietZone = 4
  const scale = size / (modules.size + 2 * quietZone)
  let path = ''
  for (let row = 0; row < modules.size; row++) {
    for (let column = 0; column < modules.size; column++) {
      if (modules.get(row, column)) {
        path += `M${column + quietZone} ${row + quietZone}h1v1h-1z`
      }
    }
  }
  return (
    `<rect x="${x}" y="${y}" width="${size}" height="${size}" fill="#ffffff"/>` +
    `<path transform="translate(${x} ${y}) scale(${scale})" d="${path}" fill="#000000" shape-rendering="crispEdges"/>`
  )
}

function slipSvg(input: SlipImageInput): string {
  const look = bankLook(input.bankCode)
  const at = input.transferredAt.setZone('Asia/Bangkok')
  const thaiDate = at
    .reconfigure({ locale: 'th-TH', outputCalendar: 'buddhist' })
    .toFormat('d LLL yyyy HH:mm')
  const englishDate = at.setLocale('en-GB').toFormat('d LLL yyyy, HH:mm:ss')
  const amount = groupedAmount(input.amount)
  const left = 56
  const right = WIDTH - 56

  return `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" font-family="${FONT}">
<rect width="${WIDTH}" height="${HEIGHT}" fill="#eef1f4"/>
<rect width="${WIDTH}" height="300" fill="${look.colour}"/>
<circle cx="${left + 34}" cy="74" r="34" fill="${look.ink}" fill-opacity="0.18"/>
${svgText(left + 34, 86, look.nameEn.slice(0, 1), { size: 34, fill: look.ink, weight: 'bold', anchor: 'middle' })}
${svgText(left + 86, 68, look.nameEn, { size: 28, fill: look.ink, weight: 'bold' })}
${svgText(left + 86, 104, `ธนาคาร${look.nameTh}`, { size: 22, fill: look.ink })}
<rect x="32" y="150" width="${WIDTH - 64}" height="${HEIGHT - 182}" rx="24" fill="#ffffff"/>
<circle cx="${WIDTH / 2}" cy="214" r="38" fill="#1aa260"/>
<path d="M${WIDTH / 2 - 18} 214 l12 13 l25 -28" stroke="#ffffff" stroke-width="8" fill="none" stroke-linecap="round" stroke-linejoin="round"/>
${svgText(WIDTH / 2, 300, 'โอนเงินสำเร็จ', { size: 40, weight: 'bold', anchor: 'middle' })}
${svgText(WIDTH / 2, 340, 'Transfer successful', { size: 24, fill: '#52606d', anchor: 'middle' })}
${svgText(WIDTH / 2, 382, `${thaiDate} น.`, { size: 22, fill: '#52606d', anchor: 'middle' })}
${svgText(WIDTH / 2, 412, englishDate, { size: 20, fill: '#7b8794', anchor: 'middle' })}
<line x1="${left}" y1="440" x2="${right}" y2="440" stroke="#d9e2ec" stroke-width="2"/>
${svgText(left, 482, 'จาก / From', { size: 20, fill: '#7b8794' })}
${svgText(left, 518, input.senderName, { size: 28, weight: 'bold' })}
${svgText(left, 552, `${look.nameEn} ${input.senderAccountMasked}`, { size: 22, fill: '#52606d' })}
<path d="M${left + 10} 574 v34 m-10 -12 l10 12 l10 -12" stroke="#9aa5b1" stroke-width="3" fill="none"/>
${svgText(left, 648, 'ไปยัง / To', { size: 20, fill: '#7b8794' })}
${svgText(left, 684, input.receiverName, { size: 28, weight: 'bold' })}
${svgText(left, 718, input.receiverAccountMasked, { size: 22, fill: '#52606d' })}
<line x1="${left}" y1="748" x2="${right}" y2="748" stroke="#d9e2ec" stroke-width="2"/>
${svgText(left, 790, 'จำนวนเงิน / Amount', { size: 20, fill: '#7b8794' })}
${svgText(left, 846, `${amount} บาท`, { size: 46, weight: 'bold', fill: look.colour === '#fec43b' ? '#4d3b2a' : look.colour })}
${svgText(left, 892, 'ค่าธรรมเนียม / Fee  0.00 บาท', { size: 20, fill: '#7b8794' })}
${svgText(left, 944, 'เลขที่รายการ / Reference', { size: 20, fill: '#7b8794' })}
${svgText(left, 976, input.transRef, { size: 22, fill: '#1f2933' })}
${svgText(left, 1140, 'สแกนตรวจสอบสลิป', { size: 20, fill: '#7b8794' })}
${svgText(left, 1168, 'Scan to verify this slip', { size: 18, fill: '#9aa5b1' })}
${qrSvg(input.miniQr, right - 236, 1000, 236)}
</svg>`
}

/** The slip as PNG or JPG bytes (720 × 1280). */
export async function renderSlipImage(input: SlipImageInput): Promise<Buffer> {
  const image = sharp(Buffer.from(slipSvg(input)))
  return input.format === 'png'
    ? image.png({ compressionLevel: 9, palette: true }).toBuffer()
    : image.jpeg({ quality: 90, mozjpeg: true }).toBuffer()
}
