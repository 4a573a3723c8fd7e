/** Tells the time; replaced in unit tests. */
export interface Clock {
  now(): Date;
}
