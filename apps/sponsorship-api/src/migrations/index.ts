import { CreateSeats1764000100000 } from './1764000100000-createSeats';
import { AddProbeBudget1764300000000 } from './1764300000000-addProbeBudget';
import { SeatRetention1765400000002 } from './1765400000002-seatRetention';

export const SPONSORSHIP_API_MIGRATIONS = [
  CreateSeats1764000100000,
  AddProbeBudget1764300000000,
  SeatRetention1765400000002,
];
