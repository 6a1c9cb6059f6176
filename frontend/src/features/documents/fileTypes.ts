/** The file types the knowledge base reads (sextant/kb/loaders/__init__.py; tests/kb/loaders/test_formats.py keeps the two lists equal). */
export const READABLE_SUFFIXES = [
  ".pdf",
  ".docx",
  ".odt",
  ".ott",
  ".xlsx",
  ".xlsm",
  ".xls",
  ".ods",
  ".csv",
  ".tsv",
  ".tab",
  ".pptx",
  ".odp",
  ".otp",
  ".html",
  ".htm",
  ".xhtml",
  ".epub",
  ".eml",
  ".mbox",
  ".png",
  ".jpg",
  ".jpeg",
  ".tif",
  ".tiff",
  ".md",
  ".markdown",
  ".txt",
  ".text",
] as const;

/** Whether a file's name has a suffix the knowledge base reads. */
export function isReadable(name: string): boolean {
  const dot = name.lastIndexOf(".");
  return dot > 0 && (READABLE_SUFFIXES as readonly string[]).includes(name.slice(dot).toLowerCase());
}
