import { CreateSeats1764000100000 } from './1764000100000-createSeats';

export const SPONSORSHIP_API_MIGRATIONS = [CreateSeats1764000100000];
