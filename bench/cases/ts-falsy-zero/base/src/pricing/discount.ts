export interface Quote {
  basePrice: number;
  discountPercent?: number;
}

export const DEFAULT_DISCOUNT = 5;
