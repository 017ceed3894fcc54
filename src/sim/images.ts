/** Image checks the service applies to uploads: the type by its bytes, and a size cap. */

export const MAX_IMAGE_BYTES = 10 * 1024 * 1024;
export const IMAGE_TYPES_TEXT = 'jpg, jpeg, png, gif, bmp, webp';

function startsWith(bytes: Uint8Array, prefix: readonly number[], at = 0): boolean {
  if (bytes.length < at + prefix.length) return false;
  return prefix.every((b, i) => bytes[at + i] === b);
}

const ascii = (text: string): number[] => [...text].map((c) => c.charCodeAt(0));

/** The image type the bytes really are, or undefined when they are none of the allowed ones. */
export function sniffImageType(bytes: Uint8Array): 'jpeg' | 'png' | 'gif' | 'bmp' | 'webp' | undefined {
  if (startsWith(bytes, [0xff, 0xd8, 0xff])) return 'jpeg';
  if (startsWith(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'png';
  if (startsWith(bytes, ascii('GIF87a')) || startsWith(bytes, ascii('GIF89a'))) return 'gif';
  if (startsWith(bytes, ascii('BM')) && bytes.length > 26) return 'bmp';
  if (startsWith(bytes, ascii('RIFF')) && startsWith(bytes, ascii('WEBP'), 8)) return 'webp';
  return undefined;
}
