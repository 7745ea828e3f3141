export interface Quote {
  basePrice: number;
  discountPercent?: number;
}

export const DEFAULT_DISCOUNT = 5;

export function finalPrice(quote: Quote): number {
  const percent = quote.discountPercent || DEFAULT_DISCOUNT;
  return Math.round(quote.basePrice * (100 - percent)) / 100;
}
